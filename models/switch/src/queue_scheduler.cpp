// placeholder: filled in by issue 3 work
