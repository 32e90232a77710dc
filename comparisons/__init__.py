"""comparisons: see ../shared/DESIGN.md; filled in by its own issue."""
