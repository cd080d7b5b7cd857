"""Every setting declared once (`declarations`), parsed by one parser per kind (`parsers`), for the
plugin (`plugin/settings.py` registers them with pytest) and the console scripts (`command_line`)."""
