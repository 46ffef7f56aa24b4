#!/bin/sh
# Reward 1 when count.txt holds 3, else 0.
if [ "$(tr -d ' \n' < /app/count.txt 2>/dev/null)" = "3" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
