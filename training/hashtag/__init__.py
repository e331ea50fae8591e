"""Hashtag generation (SegTrm): data protocol, model, training, decoding and scoring."""
