#!/bin/bash
# The bundled model's recipe (models/hviske-tiny-da): eight runs of train.sh.
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
#    word strings again, lower peak rate.
# 8. OUT/finetune7: the same from the seventh stage's package (TRAIN_SEED=1357) with twice the
#    word strings again, lower peak rate. OUT/finetune7/package is the model.
# No time budget: on a slow machine the first stage takes longer, it is not cut short.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE/out/recipe}"

# finetune FROM TO TRAIN_SEED STEPS LR WARMUP WORD_STRINGS: train.sh from FROM's package, batches
# shuffled from the first step, composed sentences at 0.25, no time budget.
finetune() {
  INIT="$OUT/$1/package" TRAIN_SEED="$3" STEPS="$4" LR="$5" WARMUP="$6" WORD_STRINGS="$7" COMPOSE=0.25 \
    SORTED_EPOCHS=0 BUDGET_MIN=0 "$HERE/train.sh" "$OUT/$2"
}

BUDGET_MIN=0 "$HERE/train.sh" "$OUT/base"
#        from      to        TRAIN_SEED      steps lr     warmup WORD_STRINGS
finetune base      finetune  "${SEED:-1234}" 8000  1e-3   300    0.25
finetune finetune  finetune2 5678            12000 8e-4   300    0.4
finetune finetune2 finetune3 9012            4000  6e-4   200    0.4
finetune finetune3 finetune4 3456            8000  5e-4   200    0.4
finetune finetune4 finetune5 7890            4000  4e-4   200    0.8
finetune finetune5 finetune6 2468            4000  3e-4   200    1.6
finetune finetune6 finetune7 1357            4000  2.5e-4 200    3.2
