#!/bin/sh
# Every word of a small model, one a line in a batch file, through the real binary on the CPU:
# N lines give N answers and a summary that counts them (no word dropped as a comment or
# refused as a bad expression). Usage: every_word.sh DISTANCIES WORKDIR
set -eu
bin=$1 dir=$2
mkdir -p "$dir"
model=$dir/every-word.txt words=$dir/every-word.words out=$dir/every-word.jsonl
: > "$model"; : > "$words"
i=1
for w in king queen man woman '#' '#tag' '# x' '"' '-' '+' '!' "'" 0 1 '!!' '--' 'a"b' 'new york' ':end' '#0'; do
  printf '%s %d.5 %d.25 -%d.75 1.0\n' "$w" "$i" "$((i % 7))" "$((i % 5))" >> "$model"
  printf '%s\n' "$w" >> "$words"
  i=$((i + 1))
done
n=$(wc -l < "$words")
"$bin" query --model "$model" --format glove --device cpu -k 3 --json --batch "$words" > "$out" 2>"$dir/every-word.err"
answers=$(grep -c '"results"' "$out" || true)
summary=$(tail -n 1 "$out")
echo "$n lines, $answers answers; $summary"
[ "$answers" -eq "$n" ] || { echo "FAIL: $n lines but $answers answers"; exit 1; }
echo "$summary" | grep -q "\"lines\":$n,.*\"queries\":$n" || { echo "FAIL: summary"; exit 1; }
echo "every word ok"
