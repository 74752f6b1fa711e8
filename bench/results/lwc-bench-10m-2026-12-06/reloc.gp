set terminal pngcairo size 1400,620 font 'Sans,11'
set grid lc rgb '#dddddd'
set key inside top left opaque box
set terminal pngcairo size 2000,640 font 'Sans,11'
set output 'docs/img/lwc-bench-10m-2026-12-06-reloc.png'
set multiplot layout 1,3 title 'Relocation on (default) and off, the same statements on the same data, N = 10000000'
set yrange [0.1:1486.81]
set title 'Latency, median'
set logscale y
set format y '%g'
set ylabel 'ms'
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -35 nomirror
set key top left
plot 'bench/results/lwc-bench-10m-2026-12-06/reloc.dat' u 2:xtic(1) lc rgb '#1f77b4' t 'LWC, relocation on', '' u 3 lc rgb '#aec7e8' t 'LWC, relocation off', '' u 4 lc rgb '#d62728' t 'PostgreSQL'
set title 'SELECT * FROM clus WHERE c100 = v: the same ranges read again'
set style data linespoints
unset logscale y
set xtics norotate autofreq
set xlabel 'range (probe)'
set ylabel 'blocks read per statement ({/Symbol g})'
set yrange [0:*]
set key center right
plot 'bench/results/lwc-bench-10m-2026-12-06/reloc-probes.dat' u 1:3 w lp lw 2 pt 7 lc rgb '#2ca02c' t 'first read (as loaded)', 'bench/results/lwc-bench-10m-2026-12-06/reloc-probes.dat' u 1:4 w lp lw 2 pt 5 lc rgb '#1f77b4' t 'again after the first round (on)', 'bench/results/lwc-bench-10m-2026-12-06/reloc-probes.dat' u 1:5 w lp lw 2 pt 4 lc rgb '#ff7f0e' t 'a third time, after the second (off)'
set title 'The stash under clustered 100-row SELECTs only (relocation on)'
set xlabel 'statements'
set ylabel 'rows'
set yrange [0:*]
set y2label 'median ms (per 10 statements)'
set y2tics
set y2range [0:*]
set key center right
plot 'bench/results/lwc-bench-10m-2026-12-06/reloc-stretch.dat' u 1:2 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'rows in the stash', 'bench/results/lwc-bench-10m-2026-12-06/reloc-stretch.dat' u 1:5 w lp lw 2 pt 4 lc rgb '#d62728' t 'statements that found it full (moved nothing)', 'bench/results/lwc-bench-10m-2026-12-06/reloc-stretch.dat' u 1:6 axes x1y2 w l lw 1 dt 2 lc rgb 'black' t 'median latency (right axis)'
unset multiplot
