"""What the kinds share over HTTP: status GETs (`local_http`), bounded replies (`replies`),
typed JSON reads (`wire`), what both chat formats share (`chat_turns`) and streamed turns
(`streaming`)."""
