"""Each command's declaration, light so that `--help` imports none of the handlers: its name,
its words for --help, its options and where its handler is (`command.Command`); `cli.py` collects
them and loads the one handler of the command run."""
