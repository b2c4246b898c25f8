#!/usr/bin/env bash
# Lints the synthesized CloudFormation templates (the stack's and its nested
# stacks') with cfn-lint when it is installed: errors fail, warnings are
# printed, each finding naming its template. cfn-lint's exit status is a
# bit mask: 2 errors, 4 warnings, 8 informational. One cfn-lint reads every
# template: it spends about 4 CPU-seconds loading its rules, which a
# process per template paid again.
set -uo pipefail
if (( $# == 0 )); then
	set -- cdk.out/*.template.json
fi
if ! command -v cfn-lint >/dev/null 2>&1; then
	echo "lint-template: cfn-lint is not installed; skipping (pip install cfn-lint)"
	exit 0
fi
cfn-lint "$@"
status=$?
if (( status & 2 )) || (( status & 1 )); then
	echo "lint-template: cfn-lint found errors in the templates (above)" >&2
	exit 1
fi
echo "lint-template: $# templates, no errors"
