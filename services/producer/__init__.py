"""Replay producer: ``python -m services.producer --file FEED.jsonl --topic posts.raw``."""
