set terminal pngcairo size 1400,620 font 'Sans,11'
set grid lc rgb '#dddddd'
set key inside top left opaque box
set output 'docs/img/lwc-bench-10m-2026-12-06-modify.png'
set multiplot layout 1,3 title 'INSERT, UPDATE and DELETE of K rows (N = 10000000)'
set logscale xy
set format x '%g'
set format y '%g'
set xlabel 'rows (K)'
set ylabel 'time (s)'
set title 'INSERT'
plot 'bench/results/lwc-bench-10m-2026-12-06/modify-INSERT.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC', 'bench/results/lwc-bench-10m-2026-12-06/modify-INSERT.dat' u 1:3 w lp lw 2 pt 4 lc rgb '#d62728' t 'PostgreSQL'
set title 'UPDATE'
plot 'bench/results/lwc-bench-10m-2026-12-06/modify-UPDATE.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC', 'bench/results/lwc-bench-10m-2026-12-06/modify-UPDATE.dat' u 1:3 w lp lw 2 pt 4 lc rgb '#d62728' t 'PostgreSQL'
set title 'DELETE'
plot 'bench/results/lwc-bench-10m-2026-12-06/modify-DELETE.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC', 'bench/results/lwc-bench-10m-2026-12-06/modify-DELETE.dat' u 1:3 w lp lw 2 pt 4 lc rgb '#d62728' t 'PostgreSQL'
unset multiplot
