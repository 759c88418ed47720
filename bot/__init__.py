"""The fitcheck Slack bot: a slack-bolt ``AsyncApp`` that answers "will it fit?" questions in
Slack by asking the fitcheck service over HTTP (``POST /v1/ask``). It imports nothing from
``service``: it is a client of the service like any internal tool."""
