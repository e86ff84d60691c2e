#!/bin/bash
# The bundled model's recipe (models/hviske-tiny-da): two runs of train.sh.
#
#   train/recipe.sh [OUT]            (default OUT = train/out/recipe)
#
# 1. OUT/base: train.sh's defaults, 40 000 steps from scratch on the template text.
# 2. OUT/finetune: 8 000 steps from the first stage's package (its weights and tokenizer) on
#    text with word strings and composed sentences (WORD_STRINGS, COMPOSE: train/README.md), at
#    a lower peak rate, batches shuffled from the first step. OUT/finetune/package is the model.
# No time budget: on a slow machine the first stage takes longer, it is not cut short.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE/out/recipe}"

BUDGET_MIN=0 "$HERE/train.sh" "$OUT/base"
INIT="$OUT/base/package" STEPS=8000 LR=1e-3 WARMUP=300 SORTED_EPOCHS=0 WORD_STRINGS=0.25 COMPOSE=0.25 \
  BUDGET_MIN=0 "$HERE/train.sh" "$OUT/finetune"
