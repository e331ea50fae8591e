"""Generated protobuf modules (see services/pb/build.py): `from services.pb import messages_pb2`."""
