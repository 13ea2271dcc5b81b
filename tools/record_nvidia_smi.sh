#!/usr/bin/env bash
# Records nvidia-smi's layouts on a machine with an NVIDIA GPU, for tests/read/nvidia-smi/.
# Run it where the driver works (the device machine of a session); it writes into $OUT (or ./out).
# A small torch allocation holds GPU memory so the Processes table and the compute-apps query
# list a real process. Review each file before copying it into the case folder.
set -u
out="${OUT:-./out}"
mkdir -p "$out"
nvidia-smi -L > "$out/list.txt" 2>&1
nvidia-smi --query-gpu=index,name,pci.bus_id,memory.total,memory.used,utilization.gpu,driver_version \
  --format=csv > "$out/query.txt" 2>&1
python3 - "$out" <<'PY'
import subprocess, sys
import torch  # the process that holds GPU memory while nvidia-smi runs

held = torch.empty(1024 * 1024 * 256, device="cuda")
out = sys.argv[1]
for name, args in (
    ("table-with-process.txt", ["nvidia-smi"]),
    ("apps-with-process.txt",
     ["nvidia-smi", "--query-compute-apps=pid,process_name,used_gpu_memory", "--format=csv"]),
):
    with open(f"{out}/{name}", "w") as f:
        f.write(subprocess.run(args, capture_output=True, text=True).stdout)
del held
PY
