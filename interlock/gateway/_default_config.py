"""The embedded default configuration: a working gateway on a fresh machine with no keys.

Every upstream is an in-process emulator (``emulator://<protocol>``), so chat, reasoning,
tool calls and approvals all work offline. State lives under ``./.interlock/``.
"""

DEFAULT_CONFIG_TOML = """
[server]
host = "127.0.0.1"
port = 8787

[store]
url = "sqlite:///.interlock/interlock.db"

[[upstreams]]
name = "emulated-responses"
protocol = "openai-responses"
base_url = "emulator://openai-responses"

[[upstreams]]
name = "emulated-chat"
protocol = "openai-chat"
base_url = "emulator://openai-chat"
reasoning_dialect = "reasoning_content"

[[upstreams]]
name = "emulated-gemini"
protocol = "gemini"
base_url = "emulator://gemini"

[[upstreams]]
name = "emulated-anthropic"
protocol = "anthropic"
base_url = "emulator://anthropic"

[[models]]
name = "demo-responses"
upstream = "emulated-responses"
model = "gpt-5-emulated"

[[models]]
name = "demo-chat"
upstream = "emulated-chat"
model = "chat-emulated"

[[models]]
name = "demo-gemini"
upstream = "emulated-gemini"
model = "gemini-3-flash-emulated"

[[models]]
name = "demo-anthropic"
upstream = "emulated-anthropic"
model = "claude-emulated"

[[agents]]
name = "demo"
model = "demo-gemini"
instructions = "You are Interlock's demo agent. Use get_weather for weather questions; delete_file needs the user's approval."
tools = ["interlock.gateway.demo_tools:get_weather", "interlock.gateway.demo_tools:delete_file"]
approval_required = ["delete_file"]
approval_style = "interrupt"
"""
