"""On-device encoders: sentence embeddings and structured extraction."""
