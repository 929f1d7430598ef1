"""What the kinds share over HTTP: status GETs (`local_http`), bounded replies (`replies`),
typed JSON reads (`wire`), what both chat formats share (`chat_turns`), streamed turns
(`streaming`), and the OpenAI-compatible chat every kind that speaks it uses: its wire format
(`openai_wire`) and its client (`openai_chat`)."""
