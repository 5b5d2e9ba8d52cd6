//! Rendering comparisons: a text table, JSON and Markdown.
