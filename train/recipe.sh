#!/bin/bash
# The bundled model's recipe (models/hviske-tiny-da): seven runs of train.sh.
#
#   train/recipe.sh [OUT]            (default OUT = train/out/recipe)
#
# 1. OUT/base: train.sh's defaults, 40 000 steps from scratch on the template text.
# 2. OUT/finetune: 8 000 steps from the first stage's package (its weights and tokenizer) on
#    text with word strings and composed sentences (WORD_STRINGS, COMPOSE: train/README.md), at
#    a lower peak rate, batches shuffled from the first step.
# 3. OUT/finetune2: 12 000 steps from the second stage's package on new training utterances
#    (TRAIN_SEED; the held-out sets stay those of seed 1234) with more word strings, at a lower
#    peak rate again.
# 4. OUT/finetune3: 4 000 steps from the third stage's package on new utterances again
#    (TRAIN_SEED=9012), lower peak rate.
# 5. OUT/finetune4: 8 000 steps from the fourth stage's package on new utterances again
#    (TRAIN_SEED=3456), lower peak rate.
# 6. OUT/finetune5: 4 000 steps from the fifth stage's package on new utterances again
#    (TRAIN_SEED=7890) with twice the word strings, lower peak rate.
# 7. OUT/finetune6: the same from the sixth stage's package (TRAIN_SEED=2468) with twice the
#    word strings again, lower peak rate. OUT/finetune6/package is the model.
# No time budget: on a slow machine the first stage takes longer, it is not cut short.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE/out/recipe}"

BUDGET_MIN=0 "$HERE/train.sh" "$OUT/base"
INIT="$OUT/base/package" STEPS=8000 LR=1e-3 WARMUP=300 SORTED_EPOCHS=0 WORD_STRINGS=0.25 COMPOSE=0.25 \
  BUDGET_MIN=0 "$HERE/train.sh" "$OUT/finetune"
INIT="$OUT/finetune/package" TRAIN_SEED=5678 STEPS=12000 LR=8e-4 WARMUP=300 SORTED_EPOCHS=0 WORD_STRINGS=0.4 \
  COMPOSE=0.25 BUDGET_MIN=0 "$HERE/train.sh" "$OUT/finetune2"
INIT="$OUT/finetune2/package" TRAIN_SEED=9012 STEPS=4000 LR=6e-4 WARMUP=200 SORTED_EPOCHS=0 WORD_STRINGS=0.4 \
  COMPOSE=0.25 BUDGET_MIN=0 "$HERE/train.sh" "$OUT/finetune3"
INIT="$OUT/finetune3/package" TRAIN_SEED=3456 STEPS=8000 LR=5e-4 WARMUP=200 SORTED_EPOCHS=0 WORD_STRINGS=0.4 \
  COMPOSE=0.25 BUDGET_MIN=0 "$HERE/train.sh" "$OUT/finetune4"
INIT="$OUT/finetune4/package" TRAIN_SEED=7890 STEPS=4000 LR=4e-4 WARMUP=200 SORTED_EPOCHS=0 WORD_STRINGS=0.8 \
  COMPOSE=0.25 BUDGET_MIN=0 "$HERE/train.sh" "$OUT/finetune5"
INIT="$OUT/finetune5/package" TRAIN_SEED=2468 STEPS=4000 LR=3e-4 WARMUP=200 SORTED_EPOCHS=0 WORD_STRINGS=1.6 \
  COMPOSE=0.25 BUDGET_MIN=0 "$HERE/train.sh" "$OUT/finetune6"
