"""Newsroom headline suggestions over gRPC (proto/headline_api.proto).

Server: ``python -m services.headline_api --port PORT``; client CLI:
``python -m services.headline_api.client --file article.txt --phrase Toyota -n 3``.
"""
