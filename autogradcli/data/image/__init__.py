"""Image files for the ``image_folder`` data kind: finding them in folders (``files``) and
decoding them with Pillow, imported only when an image is opened (``decode``)."""
