"""How much VRAM and RAM a gpt-oss model takes in llama.cpp, for a given placement and context.

The model: weights are the file's bytes, split between GPU and CPU per tensor; llama.cpp always
keeps the input embedding on the CPU, and each layer whose experts stay in system RAM moves that
layer's expert tensors there. The KV cache holds every context token for the full-attention layers
but only a window's worth for the sliding-window ones (`swa_full=False`). On top come the compute
buffers (dominated by the logits of one micro-batch) and the CUDA context of each GPU. The constants
lean to the safe side of what was measured; `bench/gpu/` checks them against NVML on a real GPU.

Several cards: llama.cpp (split mode "layer") gives each card a run of whole layers, the output
layer (the head and its logits) going with the last card (`plan.split`); a layer's KV cache lives
on its layer's card. Each card then holds its layers' weights (without the experts of the first
`cpu_moe_layers` layers, which stay in RAM), their KV cache and their share of the per-layer
allowance, and on top its own CUDA context and compute buffer: the logits only on the card with
the output layer, the experts' intermediate results only on a card that holds experts (and on
the first card, which llama.cpp hands the RAM-kept experts' work of a long prompt). Without any
experts in RAM llama.cpp pipelines a prompt's micro-batches through the cards, keeping
`PIPELINE_COPIES` copies of each card's inputs (the attention masks above all).
"""

from __future__ import annotations

from dataclasses import dataclass

from gptoss_local.catalog import ModelSpec
from gptoss_local.units import MIB

CUDA_CONTEXT_BYTES = 512 * MIB  # per GPU, counted by NVML as used memory
COMPUTE_EXTRA_BYTES = 128 * MIB  # graph scratch beyond the logits
# Calibrated on an H200 (bench/results/gpu): once the first prompt has run, use grows by ~0.1 GiB
# (20b) to ~0.3 GiB (120b) over what was allocated at load, growing with the layer count.
FIRST_USE_BYTES = 64 * MIB
LAYER_OVERHEAD_BYTES = 10 * MIB
HOST_BUFFERS_BYTES = 256 * MIB  # CPU-side compute and staging buffers
PROCESS_BYTES = 512 * MIB  # the Python process, llama.cpp and the UI themselves
KV_CELL_PAD = 256  # llama.cpp rounds KV cache sizes up to this many cells
KV_TYPE_RATIO = {"f16": 1.0, "q8_0": 34 / 64}  # q8_0: 34 bytes per 32 values vs 64 for f16
# llama.cpp's GGML_SCHED_MAX_COPIES: inputs kept per card while a prompt is pipelined
# (ggml-backend.cpp; llama-context.cpp turns it on with several cards and no tensor overrides).
PIPELINE_COPIES = 4


@dataclass(frozen=True)
class Placement:
    """Where a model's parts go. `cpu_moe_layers` = layers whose experts stay in system RAM."""

    gpu_count: int  # 0 = everything on the CPU
    cpu_moe_layers: int
    context: int
    kv_type: str = "f16"
    n_ubatch: int = 512
    # Slots (layers, then the output layer) per card, in llama.cpp's order, summing to
    # layers + 1; empty: one card takes all, or an even split over several.
    split: tuple[int, ...] = ()


@dataclass(frozen=True)
class Estimate:
    """Expected memory use in bytes; `vram` is summed over the GPUs used, `cards` is each
    card's part (in the order of `split`, the slots each card was given)."""

    vram: int
    ram: int
    kv_cache: int
    weights_on_gpu: int
    weights_in_ram: int
    cards: tuple[int, ...] = ()
    split: tuple[int, ...] = ()


def kv_cache_bytes(spec: ModelSpec, context: int, kv_type: str = "f16", n_ubatch: int = 512) -> int:
    """KV cache for `context` tokens: full-attention layers hold all, window layers a window."""
    shape = spec.shape
    per_layer_token = 2 * shape.kv_heads * shape.head_dim * 2  # K and V, f16
    full_layers = shape.kv_bytes_per_token // per_layer_token
    swa_layers = shape.layers - full_layers
    full_cells = _pad(context)
    swa_cells = min(full_cells, _pad(shape.sliding_window + n_ubatch))
    total = (full_layers * full_cells + swa_layers * swa_cells) * per_layer_token
    return int(total * KV_TYPE_RATIO[kv_type])


def compute_buffer_bytes(spec: ModelSpec, n_ubatch: int = 512, experts_on_gpu: bool = True) -> int:
    """One compute buffer: float32 logits of a micro-batch, the experts' intermediate results
    for each of its tokens, and graph scratch.

    The experts' part was fitted to NVML on an H200 (bench/results/gpu/experts-in-ram.txt): the
    buffer grew by 0.15 MiB per micro-batch token beyond the logits with some experts on the GPU
    and by 0.05 MiB with all of them in RAM; here 4 and 1 float32 vectors of the chosen experts'
    width (gpt-oss's experts are as wide as the model) per token, a little above each.
    """
    shape = spec.shape
    vectors = 4 if experts_on_gpu else 1
    experts = n_ubatch * shape.experts_used * shape.hidden * 4 * vectors
    return shape.vocab * n_ubatch * 4 + experts + COMPUTE_EXTRA_BYTES


def estimate(spec: ModelSpec, placement: Placement) -> Estimate:
    """Memory a model takes when loaded with `placement` and its context filled."""
    shape = spec.shape
    kv = kv_cache_bytes(spec, placement.context, placement.kv_type, placement.n_ubatch)
    layers_in_ram = min(max(placement.cpu_moe_layers, 0), shape.layers)
    if placement.gpu_count == 0:
        experts_on_gpu = False
        compute = compute_buffer_bytes(spec, placement.n_ubatch, experts_on_gpu)
        ram = spec.total_bytes + kv + compute + HOST_BUFFERS_BYTES + PROCESS_BYTES
        return Estimate(
            vram=0, ram=ram, kv_cache=kv, weights_on_gpu=0, weights_in_ram=spec.total_bytes
        )
    in_ram = shape.token_embd_bytes + layers_in_ram * shape.expert_layer_bytes
    on_gpu = spec.total_bytes - in_ram
    split = placement.split or even_split(shape.layers + 1, placement.gpu_count)
    loads = CardLoads(spec, placement)
    cards, start = [], 0
    for number, slots in enumerate(split):
        cards.append(loads.card(number, start, start + slots, len(split)))
        start += slots
    ram = in_ram + HOST_BUFFERS_BYTES + PROCESS_BYTES
    return Estimate(
        vram=sum(cards),
        ram=ram,
        kv_cache=kv,
        weights_on_gpu=on_gpu,
        weights_in_ram=in_ram,
        cards=tuple(cards),
        split=tuple(split),
    )


def even_split(slots: int, cards: int) -> tuple[int, ...]:
    """`slots` shared as evenly as whole slots allow, the first cards taking the remainder."""
    share, extra = divmod(slots, cards)
    return tuple(share + (1 if number < extra else 0) for number in range(cards))


def output_layer_bytes(spec: ModelSpec) -> int:
    """The output head and its norm: gpt-oss's head has the input embedding's shape and type
    (Q8_0), and the norm one float32 per hidden unit."""
    return spec.shape.token_embd_bytes + spec.shape.hidden * 4


def is_full_attention(layer: int) -> bool:
    """gpt-oss alternates: even layers attend to a sliding window, odd ones to everything."""
    return layer % 2 == 1


class CardLoads:
    """Each card's VRAM for runs of slots (0..layers-1 the layers, `layers` the output layer),
    for one placement; the per-slot sums are kept so that a run costs O(1)."""

    def __init__(self, spec: ModelSpec, placement: Placement) -> None:
        shape = spec.shape
        self.layers = shape.layers
        self.moved = min(max(placement.cpu_moe_layers, 0), shape.layers)
        self.output = output_layer_bytes(spec)
        self.ratio = KV_TYPE_RATIO[placement.kv_type]
        self.per_layer_token = 2 * shape.kv_heads * shape.head_dim * 2
        self.full_cells = _pad(placement.context)
        self.swa_cells = min(self.full_cells, _pad(shape.sliding_window + placement.n_ubatch))
        # Attention, norms and router of each layer: the file less the embeddings, the output
        # layer and the experts (the GGUF's metadata, a few MB, rides along: the safe side).
        rest = spec.total_bytes - shape.token_embd_bytes - self.output
        rest -= shape.layers * shape.expert_layer_bytes
        share, extra = divmod(max(rest, 0), shape.layers)
        weights, full = [0], [0]
        for layer in range(shape.layers):
            experts = shape.expert_layer_bytes if layer >= self.moved else 0
            weights.append(weights[-1] + share + (1 if layer < extra else 0) + experts)
            full.append(full[-1] + is_full_attention(layer))
        self._weights, self._full = weights, full
        ubatch = placement.n_ubatch
        self.logits = shape.vocab * ubatch * 4
        experts_each = ubatch * shape.experts_used * shape.hidden * 4
        self.experts_on_gpu = 4 * experts_each  # see `compute_buffer_bytes`
        self.experts_offloaded = experts_each
        self.fixed = CUDA_CONTEXT_BYTES + FIRST_USE_BYTES + COMPUTE_EXTRA_BYTES
        # Every copy counted, the first too: the graph scratch the single-card figures were
        # fitted with held the masks of small contexts only (16k at most), and pipelining is
        # not measured yet, so this errs on the safe side.
        masks = (self.full_cells + self.swa_cells) * ubatch * 2  # f16 with flash attention
        self.pipeline_inputs = PIPELINE_COPIES * (masks + ubatch * shape.hidden * 4)
        self.pipelined = placement.gpu_count > 1 and self.moved == 0

    def card(self, number: int, start: int, end: int, cards: int) -> int:
        """VRAM of card `number` (of `cards`) holding slots start..end-1."""
        last_layer = min(end, self.layers)
        layers = max(last_layer - start, 0)
        full = self._full[last_layer] - self._full[start] if layers else 0
        cells = full * self.full_cells + (layers - full) * self.swa_cells
        kv = int(cells * self.per_layer_token * self.ratio)
        total = self._weights[last_layer] - self._weights[start] if layers else 0
        total += kv + layers * LAYER_OVERHEAD_BYTES + self.fixed
        if end > self.layers:  # the output layer: its weights and the logits of a micro-batch
            total += self.output + self.logits
        if layers and last_layer > self.moved:  # experts of its own layers on this card
            total += self.experts_on_gpu
        elif number == 0 and self.moved:  # a long prompt's work of the experts kept in RAM
            total += self.experts_offloaded
        if self.pipelined:
            total += self.pipeline_inputs
        return total


def _pad(cells: int) -> int:
    return -(-cells // KV_CELL_PAD) * KV_CELL_PAD
