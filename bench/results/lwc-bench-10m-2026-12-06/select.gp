set terminal pngcairo size 1400,620 font 'Sans,11'
set grid lc rgb '#dddddd'
set key inside top left opaque box
set output 'docs/img/lwc-bench-10m-2026-12-06-select.png'
set multiplot layout 1,2 title 'SELECT * FROM t WHERE cK = v, N = 10000000 records (LWC: {/Symbol g} = 2k, sealed, permuted; PostgreSQL: B-tree)'
set logscale xy
set format x '%g'
set format y '%g'
set xlabel 'rows returned (K)'
set ylabel 'latency (ms)'
set title 'Latency, median (p95 dashed)'
set key bottom right
plot 'bench/results/lwc-bench-10m-2026-12-06/select-clustered.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC clustered', 'bench/results/lwc-bench-10m-2026-12-06/select-clustered.dat' u 1:3 w l dt 2 lc rgb '#1f77b4' notitle, 'bench/results/lwc-bench-10m-2026-12-06/select-scattered.dat' u 1:2 w lp lw 2 pt 5 lc rgb '#ff7f0e' t 'LWC scattered', 'bench/results/lwc-bench-10m-2026-12-06/select-scattered.dat' u 1:3 w l dt 2 lc rgb '#ff7f0e' notitle, 'bench/results/lwc-bench-10m-2026-12-06/select-clustered.dat' u 1:4 w lp lw 2 pt 6 lc rgb '#2ca02c' t 'PostgreSQL clustered', 'bench/results/lwc-bench-10m-2026-12-06/select-scattered.dat' u 1:4 w lp lw 2 pt 4 lc rgb '#d62728' t 'PostgreSQL scattered'
set ylabel 'rows/s (K / median)'
set title 'Throughput'
set key top left
set yrange [*:1e8]
plot 'bench/results/lwc-bench-10m-2026-12-06/select-clustered.dat' u 1:6 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC clustered', 'bench/results/lwc-bench-10m-2026-12-06/select-scattered.dat' u 1:6 w lp lw 2 pt 5 lc rgb '#ff7f0e' t 'LWC scattered', 'bench/results/lwc-bench-10m-2026-12-06/select-clustered.dat' u 1:7 w lp lw 2 pt 6 lc rgb '#2ca02c' t 'PostgreSQL clustered', 'bench/results/lwc-bench-10m-2026-12-06/select-scattered.dat' u 1:7 w lp lw 2 pt 4 lc rgb '#d62728' t 'PostgreSQL scattered'
unset multiplot
