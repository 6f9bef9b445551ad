"""Rebuilds the official data files in resources/ from local copies of upstream sources.

Run ``python scripts/generate_data.py --sources .data-sources``; see scripts/datagen/README.md.
"""
