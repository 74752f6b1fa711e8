# lib.sh - shared by the test scripts (sourced): run NAME CMD... runs CMD,
# prints its outcome under NAME and counts a failure in $failed.
run() {
	name=$1
	shift
	echo "== $name"
	if "$@"; then
		echo "   ok: $name"
	else
		echo "   FAILED: $name"
		failed=$((failed + 1))
	fi
}
