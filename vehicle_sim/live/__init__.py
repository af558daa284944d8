"""Live view of a running simulation on the Foxglove WebSocket protocol (optional: foxglove-sdk)."""
