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
# NCCL for sharded search (opened at run time): the nvidia-nccl-cu13 wheel's, when the loader
# would not find one.
if [ -z "${DISTANCIES_NCCL_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q libnccl.so.2 && command -v python3 >/dev/null; then
  d=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
  [ -n "$d" ] && [ -f "$d" ] && export DISTANCIES_NCCL_LIBRARY=$d
fi
