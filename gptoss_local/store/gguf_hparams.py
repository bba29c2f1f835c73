"""The gpt-oss hyper-parameters of a checked GGUF, refused where llama.cpp would abort.

llama.cpp reads these with GGML_ASSERTs (block count, expert counts, the rope scaling type)
or trusts them into the compute graph (a NaN norm epsilon, a value length other than the
key length), which ends the whole process; here each becomes a sentence instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gptoss_local.i18n import _
from gptoss_local.store.gguf_check import GgufInfo
from gptoss_local.store.gguf_stream import Problem

ARCH = "gpt-oss"
MAX_LAYERS, MAX_EXPERTS = 512, 1024  # LLAMA_MAX_LAYERS, LLAMA_MAX_EXPERTS
ROPE_SCALING_TYPES = ("none", "linear", "yarn", "longrope")
UINT32, INT32, FLOAT32, BOOL, STRING = 4, 5, 6, 7, 8
_TYPE_NAMES = dict(
    enumerate(("u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64"))
)
# Keys llama.cpp also takes as one value per layer (get_key_or_arr).
PER_LAYER = frozenset(
    {
        "attention.head_count",
        "attention.head_count_kv",
        "expert_used_count",
        "expert_feed_forward_length",
    }
)
PER_LAYER_TYPES = frozenset({UINT32, INT32, BOOL})


@dataclass(frozen=True)
class Hparams:
    """What the tensor shapes and the loader depend on."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    experts: int
    experts_used: int
    expert_ff: int
    context: int
    sliding_window: int


def read_hparams(info: GgufInfo) -> Hparams:
    """Reads and checks the gpt-oss hyper-parameters of `info`.

    Raises:
        Problem: A key is missing, of the wrong type, or out of the range llama.cpp survives.
    """
    keys = _Keys(info)
    layers = keys.count("block_count", high=MAX_LAYERS)
    keys.layers = layers
    hidden, heads = keys.count("embedding_length"), keys.count("attention.head_count")
    kv_heads = keys.count("attention.head_count_kv", default=heads)
    if heads % kv_heads:
        raise Problem(
            _(
                "is damaged: {arch}.attention.head_count ({heads}) is not a multiple of "
                "{arch}.attention.head_count_kv ({kv_heads})"
            ).format(arch=ARCH, heads=heads, kv_heads=kv_heads)
        )
    head_dim = keys.count("attention.key_length", default=hidden // heads)
    for other in ("attention.value_length", "rope.dimension_count"):
        if keys.count(other, default=head_dim) != head_dim:
            raise Problem(
                _(
                    "is damaged: {arch}.{other} is {value}, but "
                    "{arch}.attention.key_length is {head_dim}; gpt-oss needs them equal"
                ).format(arch=ARCH, other=other, value=keys.count(other), head_dim=head_dim)
            )
    experts = keys.count("expert_count", high=MAX_EXPERTS)
    used = keys.count("expert_used_count", high=experts)
    keys.number("attention.layer_norm_rms_epsilon", low=0.0, inclusive=False, required=True)
    keys.number("rope.freq_base", low=0.0, inclusive=False)
    keys.number("rope.freq_base_swa", low=0.0, inclusive=False)
    keys.number("rope.scaling.factor", low=0.0)
    keys.choice("rope.scaling.type", ROPE_SCALING_TYPES)
    return Hparams(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        experts=experts,
        experts_used=used,
        expert_ff=keys.count("expert_feed_forward_length"),
        context=keys.count("context_length"),
        sliding_window=keys.count("attention.sliding_window"),
    )


def _lacks(key: str) -> Problem:
    return Problem(
        _(
            "is marked as gpt-oss but lacks {key}: it is not a complete gpt-oss model "
            "(a damaged or a different file)"
        ).format(key=key)
    )


class _Keys:
    """Typed access to the `gpt-oss.*` keys, each refusal naming the key."""

    def __init__(self, info: GgufInfo) -> None:
        self.info, self.layers = info, 0

    def _type(self, key: str) -> int | None:
        return self.info.value_types.get(key)

    def _wrong_type(self, key: str, wanted: str) -> Problem:
        found = _TYPE_NAMES.get(self._type(key) or 0, _("unknown type"))
        return Problem(
            _("is damaged: {key} has type {found}, but llama.cpp reads a {wanted}").format(
                key=key, found=found, wanted=wanted
            )
        )

    def count(self, name: str, *, default: int | None = None, high: int = 2**32 - 1) -> int:
        """A uint32 from 1 to `high` (or one per layer, all equal); `default` if absent."""
        key = f"{ARCH}.{name}"
        vtype = self._type(key)
        if vtype is None:
            if default is None:
                raise _lacks(key)
            return default
        if name in PER_LAYER and key in self.info.array_types:
            value = self._per_layer(key)
        elif vtype != UINT32:
            raise self._wrong_type(key, "uint32")
        else:
            value = int(self.info.metadata.get(key, 0))
        if not 1 <= value <= high:
            if high < 2**32 - 1:
                message = _("is damaged: {key} is {value:,}; it must be from 1 to {high:,}")
            else:
                message = _("is damaged: {key} is {value:,}; it must be at least 1")
            raise Problem(message.format(key=key, value=value, high=high))
        return value

    def _per_layer(self, key: str) -> int:
        values = self.info.arrays.get(key, ())
        if self.info.array_types[key] not in PER_LAYER_TYPES or len(values) != self.layers:
            raise Problem(
                _(
                    "is damaged: {key} is an array of {count:,} values; "
                    "llama.cpp reads one integer, or one per layer ({layers})"
                ).format(key=key, count=self.info.array_lengths[key], layers=self.layers)
            )
        if len(set(values)) != 1:
            raise Problem(
                _(
                    "is not loadable: {key} differs between layers; gpt-oss has one value for all"
                ).format(key=key)
            )
        return int(values[0])

    def number(
        self, name: str, *, low: float, inclusive: bool = True, required: bool = False
    ) -> None:
        """Checks a float32 key: present if `required`, finite and above `low`."""
        key = f"{ARCH}.{name}"
        vtype = self._type(key)
        if vtype is None:
            if required:
                raise _lacks(key)
            return
        if vtype != FLOAT32:
            raise self._wrong_type(key, "float32")
        value = float(self.info.metadata.get(key, math.nan))
        if not math.isfinite(value) or value < low or (value == low and not inclusive):
            if inclusive:
                message = _("is damaged: {key} is {value}; it must be a number of {low:g} or more")
            else:
                message = _(
                    "is damaged: {key} is {value}; it must be a number of more than {low:g}"
                )
            raise Problem(message.format(key=key, value=value, low=low))

    def choice(self, name: str, allowed: tuple[str, ...]) -> None:
        """Checks an optional string key against the values llama.cpp knows."""
        key = f"{ARCH}.{name}"
        if self._type(key) is None:
            return
        value = self.info.metadata.get(key)
        if self._type(key) != STRING or value not in allowed:
            raise Problem(
                _("is damaged: {key} is {value!r}; llama.cpp knows {allowed}").format(
                    key=key, value=value, allowed=", ".join(allowed)
                )
            )
