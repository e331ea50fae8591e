"""Headline generation: full (Transformer-XL-CC) and phrase-constrained (Seq2BF)."""
