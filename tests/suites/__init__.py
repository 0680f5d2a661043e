"""The peer suites (PyNWB's battery, hdmf-zarr's unit tests, marked ``peer``) and the check of their marker."""
