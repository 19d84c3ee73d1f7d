"""dmlwgsl operators: one module per DirectML operator."""
