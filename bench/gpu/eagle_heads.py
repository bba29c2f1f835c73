"""Write the two synthetic EAGLE-3 heads bench/eagle.py needs for the 20b shape (once), in a
process of their own before any CUDA work; prints their paths.

- a random-weight head of the published shape (2880 wide, 64 heads, 17,280 feed-forward, a
  32,000-token draft vocabulary mapped to the first 32,000 target ids);
- a "pinned" head of the same shape whose whole draft vocabulary maps to one token (`PIN`),
  so it always proposes that token.

Usage: python bench/gpu/eagle_heads.py FOLDER PIN
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "tests")]

from synthetic import GPT_OSS_20B  # noqa: E402
from synthetic.eagle3 import GPT_OSS_EAGLE, write_eagle3  # noqa: E402


def main() -> None:
    folder, pin = Path(sys.argv[1]), int(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    heads = {
        folder / "eagle3-20b-random.gguf": None,
        folder / f"eagle3-20b-pinned-{pin}.gguf": [pin] * GPT_OSS_EAGLE.draft_vocab,
    }
    for path, draft_ids in heads.items():
        if not path.exists():
            partial = path.with_suffix(".partial")
            write_eagle3(partial, GPT_OSS_20B, GPT_OSS_EAGLE, seed=3, draft_ids=draft_ids)
            partial.rename(path)
        print(path)


if __name__ == "__main__":
    main()
