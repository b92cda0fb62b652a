"""The parts of ``dataset: table``: reading a file with every cell as text (``read``), the
column settings (``spec``), what is learned from the training rows (``fit``) and turning rows
into float32 inputs and targets with that state (``encode``)."""
