# Sourced on a GPU host before running a packed build: the packed folder first, then the CUDA
# libraries the pack leaves out (cuBLAS) from the toolkit or from pip's nvidia wheels.
#   . ./gpu_env.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
extra=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -e "$d/libcublas.so.13" ] && extra="$extra:$d"
done
if [ -z "$extra" ] && command -v python3 >/dev/null; then
  d=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
  [ -n "$d" ] && extra=":$d"
fi
export LD_LIBRARY_PATH="$here$extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
