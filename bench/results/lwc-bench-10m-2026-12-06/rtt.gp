set terminal pngcairo size 1400,620 font 'Sans,11'
set grid lc rgb '#dddddd'
set key inside top left opaque box
set output 'docs/img/lwc-bench-10m-2026-12-06-rtt.png'
set multiplot layout 1,2 title 'SELECT latency (median) with a simulated proxy-cloud round trip, N = 10000000'
set logscale xy
set format x '%g'
set format y '%g'
set xlabel 'rows returned (K)'
set ylabel 'latency (ms)'
set key bottom right
set title 'clustered'
plot 'bench/results/lwc-bench-10m-2026-12-06/rtt-0-clustered.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC, 0 ms', 'bench/results/lwc-bench-10m-2026-12-06/rtt-25-clustered.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#ff7f0e' t 'LWC, 25 ms', 'bench/results/lwc-bench-10m-2026-12-06/rtt-50-clustered.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#2ca02c' t 'LWC, 50 ms', 'bench/results/lwc-bench-10m-2026-12-06/rtt-100-clustered.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#9467bd' t 'LWC, 100 ms', 'bench/results/lwc-bench-10m-2026-12-06/rtt-0-clustered.dat' u 1:4 w lp lw 2 dt 2 pt 4 lc rgb '#d62728' t 'PostgreSQL (local)'
set title 'scattered'
plot 'bench/results/lwc-bench-10m-2026-12-06/rtt-0-scattered.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC, 0 ms', 'bench/results/lwc-bench-10m-2026-12-06/rtt-25-scattered.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#ff7f0e' t 'LWC, 25 ms', 'bench/results/lwc-bench-10m-2026-12-06/rtt-50-scattered.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#2ca02c' t 'LWC, 50 ms', 'bench/results/lwc-bench-10m-2026-12-06/rtt-100-scattered.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#9467bd' t 'LWC, 100 ms', 'bench/results/lwc-bench-10m-2026-12-06/rtt-0-scattered.dat' u 1:4 w lp lw 2 dt 2 pt 4 lc rgb '#d62728' t 'PostgreSQL (local)'
unset multiplot
