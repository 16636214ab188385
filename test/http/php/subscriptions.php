<?php
// A reseller's subscription through the usual client class
// (docs/examples/api-v2-client.php), as panels' API pages show it: order()
// with the Subscriptions fields and no link, then status() and cancel() of
// the id it answers, and order() with a malformed subscription. Prints what
// the class decoded for each, as one JSON object.
// Usage: php subscriptions.php URL KEY SERVICE EXPIRY
require __DIR__ . '/../../../docs/examples/api-v2-client.php';

[, $url, $key, $service, $expiry] = $argv;
$api = new Api();
$api->api_url = $url;
$api->api_key = $key;
$placed = $api->order(['service' => $service, 'username' => 'natgeo', 'min' => 100, 'max' => 110, 'posts' => 0, 'delay' => 30, 'expiry' => $expiry]);
$out = ['placed' => $placed, 'status' => $api->status($placed->order)];
$out['cancel'] = $api->cancel([$placed->order]);
$out['canceled'] = $api->status($placed->order);
$out['malformed'] = $api->order(['service' => $service, 'username' => 'natgeo', 'min' => 100, 'max' => 110, 'posts' => 0, 'delay' => 7, 'expiry' => $expiry]);
echo json_encode($out), "\n";
