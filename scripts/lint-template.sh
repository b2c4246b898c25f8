#!/usr/bin/env bash
# Lints the synthesized CloudFormation template with cfn-lint when it is
# installed: errors fail, warnings are printed. cfn-lint's exit status is a
# bit mask: 2 errors, 4 warnings, 8 informational.
set -uo pipefail
template="${1:-cdk.out/Quire.template.json}"
if ! command -v cfn-lint >/dev/null 2>&1; then
	echo "lint-template: cfn-lint is not installed; skipping (pip install cfn-lint)"
	exit 0
fi
cfn-lint "$template"
status=$?
if (( status & 2 )) || (( status & 1 )); then
	echo "lint-template: cfn-lint found errors in $template" >&2
	exit 1
fi
echo "lint-template: $template has no errors"
