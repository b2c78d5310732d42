#!/usr/bin/env bash
# Run 47: ncu of the int8 filter pass at B = 1,024 after run 46 (stalls by SASS line).
. scripts/device_ab.sh run47 .carry/portable.tgz
N=/usr/local/cuda/bin/ncu
timeout 150 $N --clock-control none --kernel-name regex:wgmma_filter --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SourceCounters --section SchedulerStats --import-source no -o $O/i8 -f \
  $NEW --benchmark_filter='^batch/batch_i8_filter/batch:1024/' --benchmark_min_time=0.01 > $O/ncu.txt 2>&1; echo "ncu rc=$?"
$N --import $O/i8.ncu-rep --page details > $O/details.txt 2>&1
$N --import $O/i8.ncu-rep --page source --csv --print-source sass > $O/sass.csv 2>$O/sass.err
rm -f $O/i8.ncu-rep; save
grep -E "Duration|Compute \(SM\) Throughput|Issued Warp|Warp Cycles Per Issued|Executed Ipc" $O/details.txt | head -8
