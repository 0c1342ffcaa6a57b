import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';

/** A bucket in memory answering PutObject, GetObject (NoSuchKey when missing), DeleteObject and ListObjectsV2 by prefix. */
export function memoryS3() {
  const objects = new Map<string, string>();
  const send = async (command: unknown) => {
    if (command instanceof PutObjectCommand) {
      objects.set(command.input.Key ?? '', String(command.input.Body));
      return {};
    }
    if (command instanceof GetObjectCommand) {
      const text = objects.get(command.input.Key ?? '');
      if (text === undefined) throw Object.assign(new Error('no such key'), { name: 'NoSuchKey' });
      return { Body: { transformToString: async () => text } };
    }
    if (command instanceof DeleteObjectCommand) {
      objects.delete(command.input.Key ?? '');
      return {};
    }
    if (command instanceof ListObjectsV2Command) {
      const keys = [...objects.keys()].filter((k) => k.startsWith(command.input.Prefix ?? ''));
      return { Contents: keys.map((Key) => ({ Key })) };
    }
    throw new Error('unexpected S3 call');
  };
  return { s3: { send } as unknown as S3Client, objects };
}
