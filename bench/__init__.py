"""Wenchang's benchmark suite: side-by-side ratios against a bare floor server.

Run it with ``python -m bench`` (``--smoke`` for a seconds-long harness check).
"""
