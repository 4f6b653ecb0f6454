#!/bin/bash
# Where gpuadvise's time goes inside the profiled process, per phase of a
# measured launch (run on the GPU machine).  Usage:
#   bench/phases.sh BUILD_DIR
# For each case: the plain run's wall time, gpuadvise's, and the injection
# library's own account (GPUADVISE_TIMING_LOG): seconds/count per phase:
#   init    profiler start-up, chip, counter availability (once a context)
#   pack    metric sets: validity, packing into <= --max-passes passes
#   meta    launch metadata (names, attributes, occupancy)
#   enable  range-profiler enable (and disable, on a metric-set change)
#   cdata   counter-data image sizing and initialisation
#   config  SetConfig (on a metric-set change)
#   start   range start
#   kernel  the launch call itself: every replay pass
#   stop, decode, eval (host-side metric evaluation), record (report line)
# and the gpuadvise run's wall time split at the injection library's
# InitializeInjection and exit handler: before (gpuadvise start-up, program
# start, cuInit up to the injection), inside, after (CUPTI and driver
# teardown, gathering records, the report), each split further at the marks
# gpuadvise and the injection library leave in the log (fork, context
# creation, first launch, process end, report written).
set -u
B=${1:?build dir}
GA=$B/gpuadvise
K=$B/kernels
T=$(mktemp -d)
wall() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); awk "BEGIN { printf \"%.2f\", $e - $s }"; }
one() { # name, gpuadvise options, command...
	local name=$1 opts=$2; shift 2
	local plain ga
	plain=$(wall "$@")
	rm -f "$T/log"
	local s0 e0
	s0=$(date +%s.%N)
	GPUADVISE_TIMING_LOG=$T/log "$GA" $opts -f -o "$T/p.json" "$@" >/dev/null 2>&1
	e0=$(date +%s.%N)
	ga=$(awk "BEGIN { printf \"%.2f\", $e0 - $s0 }")
	echo "== $name: plain $plain s, gpuadvise $ga s"
	sed 's/^/   /' "$T/log"
	# The first process's marks (a program that forks has more).
	awk -v s="$s0" -v e="$e0" '
		$1 == "mark" && !($2 in m) { m[$2] = $3 }
		$1 == "pid" && !a { for (i = 1; i < NF; i++) v[$i] = $(i + 1); a = 1 }
		END {
			if (!a) exit
			printf "   split: before init %.2f s, inside %.2f s, after exit handler %.2f s\n",
				v["init_at"] - s, v["exit_at"] - v["init_at"], e - v["exit_at"]
			printf "   before: gpuadvise start to fork %.3f, fork to injection %.3f\n",
				m["fork"] - s, v["init_at"] - m["fork"]
			if (v["ctx_created_at"] > 0 && v["first_launch_at"] > 0)
				printf "   inside: injection to context %.3f, context to first launch %.3f\n",
					v["ctx_created_at"] - v["init_at"], v["first_launch_at"] - v["ctx_created_at"]
			printf "   after: exit handler to process end %.3f, records and report %.3f, " \
				"to gpuadvise end %.3f\n", m["child_exit"] - v["exit_at"],
				m["report_done"] - m["child_exit"], e - m["report_done"]
		}' "$T/log"
}
export GPUADVISE_CACHE_DIR=$T/cache
one "testapp (metric-set cache cold)" "" "$K/gpuadvise-testapp"
one "testapp" "" "$K/gpuadvise-testapp"
# The availability image read, as every run did before it was skipped (CUPTI
# needs it only for chips newer than itself).
GPUADVISE_COUNTER_AVAILABILITY=1 one "testapp, availability read" "" "$K/gpuadvise-testapp"
# CUPTI attached, no kernel selected: its load, subscription and teardown
# alone (gpuadvise then also runs its no-kernels check, the "records and
# report" mark, about 0.1 s, and exits with status 4).
one "testapp, nothing selected" "-k no_such_kernel" "$K/gpuadvise-testapp"
one "testapp --quick" "--quick" "$K/gpuadvise-testapp"
one "testapp --max-passes 0" "--max-passes 0" "$K/gpuadvise-testapp"
one "testapp --repeat 3" "" "$K/gpuadvise-testapp" --repeat 3
one "tiny_add x3" "" "$K/gpuadvise-testapp" --only tiny_add --repeat 3
if [ -z "${PHASES_NO_TORCH:-}" ]; then
	one "pytorch workload" "" python3 tests/gpu/pytorch_workload.py
fi
echo "metric-set cache files: $(ls "$T/cache" 2>/dev/null | wc -l)"
rm -rf "$T"
