# lib.sh - shared by the test scripts (sourced): run NAME CMD... runs CMD,
# prints its outcome and wall time under NAME and counts a failure in
# $failed.
run() {
	name=$1
	shift
	echo "== $name"
	t0=$(date +%s)
	if "$@"; then
		echo "   ok: $name ($(($(date +%s) - t0)) s)"
	else
		echo "   FAILED: $name ($(($(date +%s) - t0)) s)"
		failed=$((failed + 1))
	fi
}
