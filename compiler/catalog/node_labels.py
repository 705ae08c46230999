"""The node labels the NVIDIA GPU operator puts on GPU nodes (GPU feature discovery and the
MIG manager), as ../shared/reference/nvidia-gpus.md ("GPU feature discovery node labels")
lists them: what a node says it has, whatever its driver publishes right now."""

from __future__ import annotations

GPU_COUNT = "nvidia.com/gpu.count"
"""GPUs on the node as GPU feature discovery counted them (a GPU that failed since the label
was written still counts)."""
GPU_PRODUCT = "nvidia.com/gpu.product"
"""NVML's product name with spaces as `-` (e.g. NVIDIA-H100-80GB-HBM3)."""
GPU_MEMORY = "nvidia.com/gpu.memory"
"""NVML's memory.total in MiB."""
MIG_CAPABLE = "nvidia.com/mig.capable"
MIG_CONFIG = "nvidia.com/mig.config"
"""The mig-parted configuration the MIG manager applies (gpufleet writes it per node:
node-config/); its presence means the MIG manager manages the node."""
MIG_CONFIG_STATE = "nvidia.com/mig.config.state"
"""success, pending or failed: whether the MIG manager applied `MIG_CONFIG`."""
MIG_DISABLED = "all-disabled"
"""The mig-parted configuration that turns MIG off on every GPU."""
