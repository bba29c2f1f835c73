"""This PC: GPUs (NVML), RAM and disk (`machine`), live VRAM use (`vram`), the engine (`engine`)."""

from gptoss_local.hardware.machine import Gpu, Hardware, probe

__all__ = ["Gpu", "Hardware", "probe"]
