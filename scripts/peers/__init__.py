"""The peers run beside distancies on the GPU host: PyTorch, FAISS, CuPy, SciPy, NumPy."""
