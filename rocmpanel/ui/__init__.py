"""The Qt views: main window, one module per tab, small widgets."""
