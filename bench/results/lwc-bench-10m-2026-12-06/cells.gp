set terminal pngcairo size 1400,620 font 'Sans,11'
set grid lc rgb '#dddddd'
set key inside top left opaque box
set output 'docs/img/lwc-bench-10m-2026-12-06-cells.png'
set multiplot layout 1,2 title 'Re-encryption of one block: cell permutation against AEAD sealing (one core)'
set logscale xy
set format x '%g'
set format y '%g'
set xlabel 'block size (bytes)'
set ylabel 'microseconds per block'
set title 'Time per block'
plot 'bench/results/lwc-bench-10m-2026-12-06/cells.dat' u 1:2 w lp lw 2 pt 7 t 'permute, cell 1 B', 'bench/results/lwc-bench-10m-2026-12-06/cells.dat' u 1:3 w lp lw 2 pt 5 t 'cell 2 B', 'bench/results/lwc-bench-10m-2026-12-06/cells.dat' u 1:4 w lp lw 2 pt 9 t 'cell 4 B', 'bench/results/lwc-bench-10m-2026-12-06/cells.dat' u 1:5 w lp lw 2 pt 11 t 'cell 8 B', 'bench/results/lwc-bench-10m-2026-12-06/cells.dat' u 1:6 w lp lw 3 pt 4 lc rgb 'black' t 'seal (XChaCha20-Poly1305)'
set ylabel 'MB/s'
set title 'Throughput'
set yrange [*:10000]
plot 'bench/results/lwc-bench-10m-2026-12-06/cells.dat' u 1:($1/$2) w lp lw 2 pt 7 t 'permute, cell 1 B', 'bench/results/lwc-bench-10m-2026-12-06/cells.dat' u 1:($1/$3) w lp lw 2 pt 5 t 'cell 2 B', 'bench/results/lwc-bench-10m-2026-12-06/cells.dat' u 1:($1/$4) w lp lw 2 pt 9 t 'cell 4 B', 'bench/results/lwc-bench-10m-2026-12-06/cells.dat' u 1:($1/$5) w lp lw 2 pt 11 t 'cell 8 B', 'bench/results/lwc-bench-10m-2026-12-06/cells.dat' u 1:($1/$6) w lp lw 3 pt 4 lc rgb 'black' t 'seal'
unset multiplot
