#!/usr/bin/env bash
# Lints the synthesized CloudFormation templates (the stack's and its nested
# stacks') with cfn-lint when it is installed: errors fail, warnings are
# printed. cfn-lint's exit status is a bit mask: 2 errors, 4 warnings, 8
# informational. The templates are linted side by side, one cfn-lint each,
# and each one's findings are printed together, in the templates' order.
set -uo pipefail
if (( $# == 0 )); then
	set -- cdk.out/*.template.json
fi
if ! command -v cfn-lint >/dev/null 2>&1; then
	echo "lint-template: cfn-lint is not installed; skipping (pip install cfn-lint)"
	exit 0
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
pids=()
for i in $(seq $#); do
	cfn-lint "${!i}" >"$out/$i" 2>&1 &
	pids+=($!)
done
failed=0
for i in $(seq $#); do
	wait "${pids[i-1]}"
	status=$?
	template="${!i}"
	cat "$out/$i"
	if (( status & 2 )) || (( status & 1 )); then
		echo "lint-template: cfn-lint found errors in $template" >&2
		failed=1
	else
		echo "lint-template: $template has no errors"
	fi
done
exit $failed
