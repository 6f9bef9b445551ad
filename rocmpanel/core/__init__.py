"""Qt-free logic: settings, paths, compatibility, env-var planning, presets, install plans."""
