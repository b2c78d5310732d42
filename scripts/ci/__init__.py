"""Checks that pass or fail a change: the regression gate, the docs' truth, the wgmma SASS guard."""
