set terminal pngcairo size 1400,620 font 'Sans,11'
set grid lc rgb '#dddddd'
set key inside top left opaque box
set output 'docs/img/lwc-bench-10m-2026-12-06-clients.png'
set multiplot layout 1,2 title 'Concurrent clients, 100-row SELECTs (clustered), LWC at 25 ms proxy-cloud round trip'
set logscale xy
set format x '%g'
set format y '%g'
set xlabel 'clients'
set xtics (1,4,16,64)
set ylabel 'statements/s'
set title 'Throughput'
set yrange [*:1e6]
plot 'bench/results/lwc-bench-10m-2026-12-06/clients.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC', 'bench/results/lwc-bench-10m-2026-12-06/clients.dat' u 1:5 w l dt 2 lc rgb '#1f77b4' t 'LWC, linear in clients', 'bench/results/lwc-bench-10m-2026-12-06/clients.dat' u 1:4 w lp lw 2 pt 4 lc rgb '#d62728' t 'PostgreSQL (local)'
set ylabel 'median latency (ms)'
set title 'Latency'
unset yrange
plot 'bench/results/lwc-bench-10m-2026-12-06/clients.dat' u 1:3 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'LWC'
unset multiplot
