"""Platform backends behind small interfaces: GPU discovery, environment stores."""
